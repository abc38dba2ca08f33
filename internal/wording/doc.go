// Package wording holds a check of the text people read: every string in
// the module's Go code (messages, help, errors) and every Markdown page.
// It finds the slips a reader trips on and a compiler never sees, such as
// a word written twice ("the the") or two spaces inside a sentence, so
// that once fixed they stay fixed. The check is the package's test; there
// is no code to import.
package wording
