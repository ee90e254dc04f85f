package logging

// NewTint is newTint, for tests: tint is used only on a terminal.
var NewTint = newTint
