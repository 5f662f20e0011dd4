#!/usr/bin/env bash
# Acquires a slot on a pool with the hmac caller policy, signing the request with curl and
# openssl only (docs/caller-policies.md). Set SLUICE_LOCK_URL, POOL, KEY, KEY_ID and SECRET.
set -euo pipefail

missing=()
for name in SLUICE_LOCK_URL POOL KEY KEY_ID SECRET; do
  [[ -n "${!name:-}" ]] || missing+=("$name")
done
if ((${#missing[@]})); then
  echo "Set ${missing[*]}. SLUICE_LOCK_URL: the server's lock URL (http://localhost:8080);" \
    "POOL: the pool's subdomain; KEY, KEY_ID and SECRET: the key, its id and its request-signing" \
    "secret (slc_req_...), as sluice key create prints them." >&2
  exit 2
fi

path="/pools/${POOL}/lock/acquire"
body='{"waitMs":2000}'
timestamp=$(( $(date +%s) * 1000 ))
nonce=$(openssl rand -hex 16)
digest=$(printf '%s' "$body" | openssl dgst -sha256 -r | cut -d' ' -f1)
signature=$(
  printf 'sluice-caller-v1\nv1\n%s\nPOST\n%s\n%s\n%s\n%s' \
    "$timestamp" "$path" "$digest" "$KEY_ID" "$nonce" \
    | openssl dgst -sha256 -hmac "$SECRET" -binary | openssl base64 -A | tr '+/' '-_' | tr -d '='
)

curl -sS -X POST "${SLUICE_LOCK_URL}${path}" \
  -H "x-svc-key: ${KEY}" \
  -H 'content-type: application/json' \
  -H "x-svc-request-timestamp: ${timestamp}" \
  -H "x-svc-request-nonce: ${nonce}" \
  -H "x-svc-request-signature: ${signature}" \
  --data "$body"
