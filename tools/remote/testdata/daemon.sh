#!/bin/sh
# Leaves a grandchild in a session of its own (out of the process group),
# holding stdout and stderr open, then sleeps past the timeout.
setsid sleep 30 &
sleep 10
