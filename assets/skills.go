package assets

import (
	"embed"
	"io/fs"
)

// SkillFiles is the built-in skill catalog, under the "skills/" prefix: one
// directory per skill, each holding a SKILL.md.
//
//go:embed skills
var SkillFiles embed.FS

// Skills returns the built-in skill catalog rooted at the skills directory,
// as session/skills expects (one top-level directory per skill).
func Skills() fs.FS {
	sub, err := fs.Sub(SkillFiles, "skills")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "skills" is a constant.
		panic(err)
	}
	return sub
}
