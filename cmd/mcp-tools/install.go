package main

import "io"

func install(args []string, stdout, stderr io.Writer) error { return usagef("install: not yet") }
