#!/bin/sh
# Cleans up on SIGTERM: writes "terminated" to $MARK and exits.
trap 'echo terminated > "$MARK"; exit 0' TERM
echo $$ > "$PIDFILE"
sleep 300 &
wait
