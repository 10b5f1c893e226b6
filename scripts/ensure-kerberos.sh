#!/usr/bin/env bash
# The Kerberos suites' real parts (test/kerberos/): an MIT KDC and kadmin.local (krb5-kdc,
# krb5-admin-server), the client tools (krb5-user), the GSSAPI headers the optional `kerberos` npm
# package builds against (libkrb5-dev), and Apache httpd with mod_auth_gssapi (apache2,
# libapache2-mod-auth-gssapi) enforcing SPNEGO in front of the simulator's RM face. Nothing is
# started here (the suites start their own KDC and httpd in temp dirs), and `npm start` needs none of it.
#
# When libkrb5-dev arrives after `npm ci` (a fresh CI machine), npm skipped the optional `kerberos`
# package (its native build needs gssapi.h); it is then built here at the version package-lock.json pins.
set -euo pipefail
cd "$(dirname "$0")/.."

"$(dirname "$0")/ensure-debian-packages.sh" kerberos \
  'test -x /usr/sbin/krb5kdc && test -x /usr/sbin/kadmin.local && test -x /usr/bin/kinit && test -f /usr/include/gssapi/gssapi.h && test -x /usr/sbin/apache2 && test -f /usr/lib/apache2/modules/mod_auth_gssapi.so' \
  krb5-kdc krb5-admin-server krb5-user libkrb5-dev apache2 libapache2-mod-auth-gssapi

have_npm_kerberos() { node -e "require('kerberos')" >/dev/null 2>&1; }
if have_npm_kerberos; then exit 0; fi

if [[ "${CI:-}" != "true" && ! ( "$(id -u)" == "0" && ! -t 0 ) ]]; then
  echo "ensure-kerberos: the optional npm package 'kerberos' is not built; run: npm install (or npm rebuild kerberos)" >&2
  exit 1
fi
version="$(node -p "(require('./package-lock.json').packages['node_modules/kerberos'] || {}).version || ''")"
if [[ -z "$version" ]]; then
  echo "ensure-kerberos: package-lock.json pins no 'kerberos' version" >&2
  exit 1
fi
echo "ensure-kerberos: building the optional npm package kerberos@$version against libkrb5-dev" >&2
if [[ -d node_modules/kerberos ]]; then
  npm rebuild kerberos --no-audit --no-fund >/dev/null
else
  npm install --no-save --no-audit --no-fund "kerberos@$version" >/dev/null
fi
if ! have_npm_kerberos; then
  echo "ensure-kerberos: the 'kerberos' npm package still does not load" >&2
  exit 1
fi
echo "ensure-kerberos: ok" >&2
