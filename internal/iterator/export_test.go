package iterator

// AdmitFunc is an Admitter that calls the function, for the tests (the
// DB's Iterator keeps its Admitter in a struct it already has).
type AdmitFunc func(i int) bool

// Admit returns f(i).
func (f AdmitFunc) Admit(i int) bool { return f(i) }
