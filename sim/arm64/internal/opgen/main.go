// Command opgen writes sim/arm64's operation inventory: it reads the const
// blocks of types op, group and opFlags in inst.go and writes zops.go:
// opTable, keyed by op (so that inserting an operation anywhere cannot
// shift an entry), with each op's name, group, flags and fixed access
// size taken from the inventory entry that begins its comment
// ("grpALU1 opfSetsNZCV: with flags", "grpLdStHot opfLoad size=8"); the
// names of the groups and flags; op's and group's String methods; and
// opFirstFP, the first op of the groups marked execFP. It fails on an op
// without a group, on a word it does not know and on execFP ops that do
// not stand together. Run by go generate in sim/arm64.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("i", "inst.go", "the Go file declaring the op, group and opFlags constants")
	out := flag.String("o", "zops.go", "the file to write")
	flag.Parse()
	inv, err := read(*in)
	if err == nil {
		err = inv.write(*out, *in)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen:", err)
		os.Exit(1)
	}
}

// constant is one name of a const block with the text of its line comment.
type constant struct {
	name, comment string
	pos           token.Position
}

// entry is one op's inventory entry.
type entry struct {
	name, group string
	flags       []string
	size        int
}

type inventory struct {
	ops     []entry
	groups  []string // in declaration order, grpNone first
	execFP  map[string]bool
	flags   []string // in bit order
	firstFP string
}

// block returns the constants of the const block whose first spec has the
// named type, in order; only the first may have a type or a value (iota).
func block(fset *token.FileSet, f *ast.File, path, typ string) ([]constant, error) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || len(g.Specs) == 0 {
			continue
		}
		first := g.Specs[0].(*ast.ValueSpec)
		if id, ok := first.Type.(*ast.Ident); !ok || id.Name != typ {
			continue
		}
		var cs []constant
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if v != first && (v.Type != nil || len(v.Values) != 0) {
				return nil, fmt.Errorf("%s: %s: only the first %s constant may have a type or value", path, v.Names[0].Name, typ)
			}
			text := ""
			if v.Comment != nil {
				text = strings.TrimSpace(strings.TrimPrefix(v.Comment.List[0].Text, "//"))
			}
			for _, n := range v.Names {
				cs = append(cs, constant{n.Name, text, fset.Position(n.Pos())})
			}
		}
		return cs, nil
	}
	return nil, fmt.Errorf("%s: no const block of type %s", path, typ)
}

func read(path string) (*inventory, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	ops, err := block(fset, f, path, "op")
	if err != nil {
		return nil, err
	}
	groups, err := block(fset, f, path, "group")
	if err != nil {
		return nil, err
	}
	flags, err := block(fset, f, path, "opFlags")
	if err != nil {
		return nil, err
	}
	inv := &inventory{execFP: map[string]bool{}}
	isGroup, isFlag := map[string]bool{}, map[string]bool{}
	for i, g := range groups {
		if !strings.HasPrefix(g.name, "grp") {
			return nil, fmt.Errorf("%s: group %s: the names begin with grp", g.pos, g.name)
		}
		if i > 0 { // grpNone, the zero value, is no group
			isGroup[g.name] = true
		}
		inv.groups = append(inv.groups, g.name)
		if strings.HasPrefix(g.comment, "execFP") {
			inv.execFP[g.name] = true
		}
	}
	for _, fl := range flags {
		if !strings.HasPrefix(fl.name, "opf") {
			return nil, fmt.Errorf("%s: flag %s: the names begin with opf", fl.pos, fl.name)
		}
		isFlag[fl.name] = true
		inv.flags = append(inv.flags, fl.name)
	}
	if len(inv.flags) > 16 {
		return nil, fmt.Errorf("%s: %d flags do not fit opFlags (uint16)", path, len(inv.flags))
	}
	lastFP := -1
	for _, o := range ops {
		if !strings.HasPrefix(o.name, "op") { // _ and the count numOps
			continue
		}
		e := entry{name: o.name}
		tag, _, _ := strings.Cut(o.comment, ":")
		for _, w := range strings.Fields(tag) {
			switch {
			case isGroup[w] && e.group == "":
				e.group = w
			case isGroup[w]:
				return nil, fmt.Errorf("%s: %s: two groups (%s, %s)", o.pos, o.name, e.group, w)
			case isFlag[w]:
				e.flags = append(e.flags, w)
			case strings.HasPrefix(w, "size="):
				n, err := strconv.Atoi(strings.TrimPrefix(w, "size="))
				if err != nil || n <= 0 || n > 255 {
					return nil, fmt.Errorf("%s: %s: bad %q", o.pos, o.name, w)
				}
				e.size = n
			default:
				return nil, fmt.Errorf("%s: %s: %q is no group (grp...), flag (opf...) or size=N; the entry ends at a colon", o.pos, o.name, w)
			}
		}
		if e.group == "" {
			return nil, fmt.Errorf("%s: %s has no group: begin its comment with one of the grp constants", o.pos, o.name)
		}
		if inv.execFP[e.group] {
			i := len(inv.ops)
			if inv.firstFP == "" {
				inv.firstFP = e.name
			} else if lastFP != i-1 {
				return nil, fmt.Errorf("%s: %s (%s) is run by execFP but does not follow the other execFP ops (Core.Execute tests op >= opFirstFP)", o.pos, o.name, e.group)
			}
			lastFP = i
		}
		inv.ops = append(inv.ops, e)
	}
	if inv.firstFP == "" {
		return nil, fmt.Errorf("%s: no op of an execFP group", path)
	}
	return inv, nil
}

func (inv *inventory) write(path, from string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/opgen from %s; DO NOT EDIT.\n\npackage arm64\n\nimport \"strconv\"\n\n", from)
	b.WriteString("// opTable is the inventory of the operations, keyed by op.\nvar opTable = [...]opSpec{\n")
	for _, e := range inv.ops {
		fl := "0"
		if len(e.flags) > 0 {
			fl = strings.Join(e.flags, " | ")
		}
		fmt.Fprintf(&b, "\t%s: {%q, %s, %s, %d},\n", e.name, strings.TrimPrefix(e.name, "op"), e.group, fl, e.size)
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "// opFirstFP is the first op Core.Execute hands to execFP; the ops of the\n// execFP groups follow it without a gap.\nconst opFirstFP = %s\n\n", inv.firstFP)
	b.WriteString("// groupNames are the groups' names, keyed by group.\nvar groupNames = [...]string{\n")
	for _, g := range inv.groups {
		fmt.Fprintf(&b, "\t%s: %q,\n", g, strings.TrimPrefix(g, "grp"))
	}
	b.WriteString("}\n\n// groupExecFP tells the groups whose ops execFP runs.\nvar groupExecFP = [len(groupNames)]bool{\n")
	for _, g := range inv.groups {
		if inv.execFP[g] {
			fmt.Fprintf(&b, "\t%s: true,\n", g)
		}
	}
	b.WriteString("}\n\n// opFlagNames are the flags' names in bit order.\nvar opFlagNames = [...]string{\n")
	for _, f := range inv.flags {
		fmt.Fprintf(&b, "\t%q,\n", strings.TrimPrefix(f, "opf"))
	}
	b.WriteString("}\n\n")
	b.WriteString(`// String is the operation's name as the constant spells it without "op"
// (AddXi, LdrXo, ...), for diagnostics.
func (o op) String() string {
	if int(o) < len(opTable) && opTable[o].name != "" {
		return opTable[o].name
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// String is the group's name without "grp".
func (g group) String() string {
	if int(g) < len(groupNames) && groupNames[g] != "" {
		return groupNames[g]
	}
	return "group(" + strconv.Itoa(int(g)) + ")"
}
`)
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(path, src, 0o644)
}
