#!/bin/sh
# A subprocess tool in POSIX sh: reads {"input": "..."} on stdin, answers
# {"output": "...", "success": true} on stdout. MOOD_WORDS comes from the
# tool's env in the config file.
input=$(cat)
text=$(printf '%s' "$input" | sed -n 's/.*"input"[[:space:]]*:[[:space:]]*"\(.*\)".*/\1/p' | tr 'A-Z' 'a-z')
mood="neutral"
IFS=','
for w in ${MOOD_WORDS:-good}; do
  case "$text" in *"$w"*) mood="positive" ;; esac
done
case "$text" in *bad*|*awful*|*sad*) mood="negative" ;; esac
printf '{"output": "%s", "success": true, "structured": {"sentiment": "%s"}}\n' "$mood" "$mood"
