// Package wording holds a check of the text people read: every string in
// the module's Go code (messages, help, errors) and every Markdown page.
// It finds the slips a reader trips on and a compiler never sees, such as
// a word written twice ("the the") or two spaces inside a sentence, so
// that once fixed they stay fixed. It also holds docs/design.md's package
// map to the packages the module has. The checks are the package's tests;
// there is no code to import.
package wording
