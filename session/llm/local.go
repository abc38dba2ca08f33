package llm

// LocalTitler is implemented by providers that title a conversation
// themselves, without a model call. The offline model does: it has no model
// to ask, and a title that is the same on every run keeps what tests and
// demos show the same.
type LocalTitler interface {
	// LocalTitle is the title for a conversation that opened with
	// firstUser and was first answered with firstAnswer.
	LocalTitle(firstUser, firstAnswer string) string
}

// RuleJudged is implemented by providers that cannot review a tool call by
// answering a prompt; whoever judges calls made with such a model applies a
// fixed rule instead of asking it. The offline model is one: it answers
// from a script, and a judge that approved by its script's accident would
// approve anything.
type RuleJudged interface {
	// JudgedByRule reports whether calls must be judged by rule.
	JudgedByRule() bool
}
