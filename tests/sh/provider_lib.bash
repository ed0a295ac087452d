# tests/sh/provider_lib.bash - the OPENSSL_CONF that brings secho's provider to an unmodified
# program (docs/PROVIDER.md), written in one place for the provider's tests and the demo
# (sourced).

# provider_conf FILE MODULE PREFERRED: a configuration that activates the default provider
# and secho (MODULE: the path of secho.so) and prefers PREFERRED's algorithms
# (default_properties = ?provider=PREFERRED: secho, or default for a control).
provider_conf() {
	cat >"$1" <<CONF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = evp_properties
[provider_sect]
default = default_sect
secho = secho_sect
[default_sect]
activate = 1
[secho_sect]
module = $2
activate = 1
[evp_properties]
default_properties = ?provider=$3
CONF
}
