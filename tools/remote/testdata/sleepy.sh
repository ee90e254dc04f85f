#!/bin/sh
# Leaves a grandchild behind and sleeps past any sane timeout. The
# grandchild's pid goes to the file named by $PIDFILE.
sleep 300 &
echo $! > "$PIDFILE"
sleep 300
