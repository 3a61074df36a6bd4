#!/usr/bin/env bash
# Makes the secrets of the compose lab in docker/secrets/ (or $1 with -o DIR):
# a CA, a server certificate for the names clients use, and one token per
# tenant. The tokens file holds only their SHA-256; tokens.txt holds the
# tokens themselves, to hand out.
#
#   docker/make-lab-secrets.sh [-o DIR] [-n NAME]... TENANT[:admin]...
#   docker/make-lab-secrets.sh alice bob ops:admin
#
# The certificate always names `resident` (the HEALTHCHECK's name), `localhost`
# and 127.0.0.1; add the host's name with -n.
set -euo pipefail
out="$(dirname "$0")/secrets"
names=(resident localhost)
while getopts "o:n:" opt; do
  case $opt in
    o) out=$OPTARG ;;
    n) names+=("$OPTARG") ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-o DIR] [-n NAME]... TENANT[:admin]..." >&2; exit 2; }
mkdir -p "$out"
cd "$out"
umask 077
san="subjectAltName=IP:127.0.0.1"
for n in "${names[@]}"; do san="$san,DNS:$n"; done
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 825 -subj /CN=resident-lab-ca 2>/dev/null
openssl req "${ec[@]}" -keyout server.key -out server.csr -subj /CN=resident 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days 825 -extfile <(echo "$san") 2>/dev/null
rm -f server.csr ca.srl
: >tokens
: >tokens.txt
for spec in "$@"; do
  tenant=${spec%%:*}
  role=user
  [ "$spec" != "$tenant" ] && role=${spec#*:}
  token=$(openssl rand -base64 32 | tr '+/' '-_' | tr -d '=\n')
  hash=$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)
  echo "$hash $tenant $role" >>tokens
  echo "$tenant $token" >>tokens.txt
done
# The server runs as uid 10001 in the image and reads these bind-mounted files.
chmod 0644 ca.pem server.pem tokens
chmod 0640 server.key
chown 10001 server.key 2>/dev/null || chmod 0644 server.key
echo "make-lab-secrets: wrote $(pwd): ca.pem server.pem server.key tokens (tokens.txt: hand these out)"
