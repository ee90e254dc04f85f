#!/bin/sh
# Ignores SIGTERM (and so does its child): only SIGKILL ends it.
trap '' TERM
echo $$ > "$PIDFILE"
sleep 300
