package main

// The docs are checked against the repository and the command tree: every
// relative link and every repository path they mention exists (a heading
// too, for a link with a #fragment), and every `emuprof SUBCOMMAND --flag`
// they show is a flag of that subcommand.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docBlock returns the lines of the first indented block after the text
// after in the doc at path (relative to the repository): the commands a
// test runs as the docs write them.
func docBlock(t *testing.T, path, after string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", path))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), after)
	if !ok {
		t.Fatalf("%s has no %q", path, after)
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "    ") {
			lines = append(lines, strings.TrimSpace(l))
		} else if len(lines) > 0 {
			break
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s has no indented block after %q", path, after)
	}
	return strings.Join(lines, "\n") + "\n"
}

// docFiles are the repository's markdown docs: README.md and docs/**.md.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// docCode is what a markdown text shows as code: its inline code spans and
// the lines of its indented and fenced code blocks.
func docCode(text string) []string {
	var code []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "- ") {
			code = append(code, line)
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
		}
	}
	return code
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// A path into the repository: a top-level directory, then components.
	repoPath  = regexp.MustCompile(`^(docs|bench|scripts|testdata|emu|timemodel|cmd|analyses|trace|guest|syscalls|sched|loader|mm|cpu|decode|internal)/[A-Za-z0-9_.+/-]*[A-Za-z0-9_]$`)
	proseDoc  = regexp.MustCompile(`(?:^|[\s(])(docs/[A-Za-z0-9_/-]+\.md)\b`)
	emuprofAt = regexp.MustCompile(`(?:^|[\s'"(;&|])(?:\S*/)?emuprof\s+(\S+)`)
	// Paths that a build makes (make -C bench/timemodel), not in git.
	builtPaths = []string{"bench/timemodel/bin/"}
	// main adds these hidden flags to the tree rootCommand makes.
	mainFlags = map[string]bool{"cpuprofile": true, "memprofile": true}
)

// placeholder says whether a path component stands for something (GUEST,
// <app>, *.json) rather than naming a file.
func placeholder(path string) bool {
	if strings.ContainsAny(path, "<>*{}$") {
		return true
	}
	for _, c := range strings.Split(path, "/") {
		if regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`).MatchString(c) {
			return true
		}
	}
	return false
}

// headingAnchors are the GitHub anchors of a markdown file's headings.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

func TestDocLinksAndPathsExist(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, file := range docFiles(t, root) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		rel, _ := filepath.Rel(root, file)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			full := file
			if path != "" {
				full = filepath.Join(filepath.Dir(file), path)
			}
			data, err := os.ReadFile(full)
			if err != nil && !isDir(full) {
				t.Errorf("%s: link %s: no such file", rel, target)
				continue
			}
			if frag != "" && !headingAnchors(string(data))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", rel, target, path, frag)
			}
		}
		var mentioned []string
		for _, code := range docCode(text) {
			for _, f := range strings.Fields(code) {
				f = strings.Trim(f, "'\"(),;:")
				if repoPath.MatchString(f) && !placeholder(f) {
					mentioned = append(mentioned, f)
				}
			}
		}
		for _, m := range proseDoc.FindAllStringSubmatch(text, -1) {
			mentioned = append(mentioned, m[1])
		}
		for _, p := range mentioned {
			if slices.ContainsFunc(builtPaths, func(b string) bool { return strings.HasPrefix(p, b) }) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s mentions %s, which does not exist", rel, p)
			}
		}
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// hasFlag says whether cmd takes --name (or -name, a shorthand).
func hasFlag(cmd *cobra.Command, name string, short bool) bool {
	if name == "help" || short && name == "h" || !short && mainFlags[name] {
		return true
	}
	if short {
		return cmd.Flags().ShorthandLookup(name) != nil || cmd.InheritedFlags().ShorthandLookup(name) != nil
	}
	return cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
}

// flagName is the name of a flag token ("--out=DIR" gives "out", "-q" gives
// "q" and short), or "" for a token that is no flag.
func flagName(tok string) (name string, short bool) {
	tok = strings.Trim(tok, "'\"(),;")
	switch {
	case tok == "--" || tok == "-":
		return "", false
	case strings.HasPrefix(tok, "--"):
		name, _, _ = strings.Cut(tok[2:], "=")
		return name, false
	case strings.HasPrefix(tok, "-") && len(tok) == 2 && (tok[1] < '0' || tok[1] > '9'):
		return tok[1:], true
	}
	return "", false
}

// deliberatelyWrong are commands the docs show to say that emuprof refuses
// them.
var deliberatelyWrong = map[string]bool{"trms --p3 4": true}

func TestDocCommandsUseRealFlags(t *testing.T) {
	root, _ := filepath.Abs("../..")
	tree := rootCommand(nil)
	tree.InitDefaultHelpFlag()
	tree.InitDefaultVersionFlag()
	subs := map[string]*cobra.Command{}
	for _, c := range tree.Commands() {
		c.InitDefaultHelpFlag()
		subs[c.Name()] = c
	}
	anyHas := func(name string, short bool) bool {
		for _, c := range subs {
			if hasFlag(c, name, short) {
				return true
			}
		}
		return hasFlag(tree, name, short)
	}
	checked := 0
	for _, file := range docFiles(t, root) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for _, code := range docCode(string(raw)) {
			// emuprof SUB [flags...]: each flag is SUB's, up to the program.
			for _, loc := range emuprofAt.FindAllStringSubmatchIndex(code, -1) {
				word := code[loc[2]:loc[3]]
				if before := strings.Fields(code[:loc[0]+1]); len(before) > 0 && (strings.HasSuffix(before[len(before)-1], ".sh") || strings.HasSuffix(before[len(before)-1], ".py")) {
					continue // emuprof as a script's argument
				}
				cmd := tree
				rest := code[loc[2]:]
				if !strings.HasPrefix(word, "-") {
					if strings.ToLower(word) != word || strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") != "" {
						continue // a placeholder (NAME) or not a command line
					}
					c, ok := subs[word]
					if !ok {
						t.Errorf("%s: `emuprof %s`: no such subcommand", rel, word)
						continue
					}
					cmd, rest = c, code[loc[3]:]
				}
				checkFlags(t, rel, cmd, rest, &checked)
			}
			// A span that starts with a subcommand: `causal --exact`.
			fields := strings.Fields(code)
			if len(fields) > 1 && subs[fields[0]] != nil && strings.HasPrefix(fields[1], "-") && !deliberatelyWrong[strings.Join(fields[:min(3, len(fields))], " ")] {
				checkFlags(t, rel, subs[fields[0]], strings.TrimPrefix(strings.TrimSpace(code), fields[0]), &checked)
			}
			// A span that starts with a flag names a flag of some command.
			if len(fields) > 0 {
				if name, short := flagName(fields[0]); name != "" && !anyHas(name, short) {
					t.Errorf("%s: `%s`: no emuprof command has the flag", rel, code)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d flags of emuprof commands found in the docs: the parser misses them", checked)
	}
}

// checkFlags checks the flags in line, up to the end of the command (a
// bare --, a pipe, a separator), against cmd.
func checkFlags(t *testing.T, file string, cmd *cobra.Command, line string, checked *int) {
	t.Helper()
	for _, tok := range strings.Fields(line) {
		if tok == "--" || strings.ContainsAny(tok[:1], "|;&<>`") || tok == "..." {
			return
		}
		name, short := flagName(tok)
		if name == "" {
			continue
		}
		*checked++
		if !hasFlag(cmd, name, short) {
			t.Errorf("%s: `emuprof %s ... %s`: %s has no such flag", file, cmd.Name(), tok, cmd.CommandPath())
		}
	}
}
