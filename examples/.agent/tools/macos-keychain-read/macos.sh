#!/bin/sh
# macos-keychain-read: report whether a generic-password item exists.
# Never passes -w, so the secret itself is never read.
input=$(cat)

field() {
  printf '%s' "$input" | plutil -extract "$1" raw -o - - 2>/dev/null
}

fail() {
  printf '{"ok": false, "error": "%s"}\n' "$1"
  echo "$1" >&2
  exit 1
}

service=$(field service) || fail "service is required"
account=$(field account) || fail "account is required"
[ -n "$service" ] || fail "service must not be empty"
[ -n "$account" ] || fail "account must not be empty"
case "$service$account" in
  *[!A-Za-z0-9._@-]*) fail "service and account may only contain A-Z a-z 0-9 . _ @ -" ;;
esac

err=$(security find-generic-password -s "$service" -a "$account" 2>&1 >/dev/null)
case $? in
  0) found=true ;;
  44) found=false ;;
  *) echo "$err" >&2; exit 2 ;;
esac
printf '{"ok": true, "found": %s, "service": "%s", "account": "%s"}\n' "$found" "$service" "$account"
