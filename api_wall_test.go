package bloomkv_test

// This file proves that the module's public packages can be used by code
// outside the module with exported types only.
//
// Go forbids a package outside github.com/bloomkv/bloomkv from importing
// anything under github.com/bloomkv/bloomkv/internal. A public package may
// still use internal types in its API — sstable.Writer.Add takes an internal
// key — but then outside code can call it only if it can spell that type,
// which it can when a public package declares an exported alias for it
// (sstable/keys.go: `type InternalKey = base.InternalKey`). A signature that
// names an internal type with no public alias compiles here and is
// unusable, or usable only by type inference, everywhere else.
//
// The bench module cannot serve as the proof. Go's internal rule goes by
// import path, not by module: github.com/bloomkv/bloomkv/bench/... lies
// under github.com/bloomkv/bloomkv, so it may import the store's internal
// packages, and a missing alias would go unnoticed there. Hence this test
// reads the public API from the compiler's export data and checks every
// type it names.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
)

// TestPublicAPINamesOnlyPublicTypes checks that every named type from an
// internal package reachable from the exported API of a public package (a
// package of this module with no "internal" element in its import path, not
// a main package, not under cmd/) has an exported alias in some public
// package. It first runs the walker on synthetic packages, so that a walker
// that finds nothing cannot pass for an API without violations.
func TestPublicAPINamesOnlyPublicTypes(t *testing.T) {
	t.Run("walker", testAPIWalkerFindsHiddenTypes)
	t.Run("module", testModuleAPINamesOnlyPublicTypes)
}

// testModuleAPINamesOnlyPublicTypes runs the check over this module's
// public packages, as the go command builds them now.
func testModuleAPINamesOnlyPublicTypes(t *testing.T) {
	modPath, public := publicPackages(t)
	t.Logf("public packages: %s", strings.Join(public, " "))
	exports := exportFiles(t, public)

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("go list -export reported no export data for %q", path)
		}
		return os.Open(file)
	})
	// One importer for all packages: it caches what it imports, so a type
	// reached from two packages is the same *types.TypeName in both, and an
	// alias declared in one package matches the type used in another.
	var pkgs []*types.Package
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s from export data: %v", path, err)
		}
		pkgs = append(pkgs, pkg)
	}

	isPublic := func(path string) bool { return slices.Contains(public, path) }
	violations := checkPublicAPI(pkgs, isPublic)
	if len(violations) > 0 {
		var b strings.Builder
		for _, v := range violations {
			fmt.Fprintf(&b, "\n\t%s", v)
		}
		t.Errorf("%d exported identifiers of %s's public packages name internal types that code outside the module cannot name; "+
			"declare an exported alias (type X = internalpkg.X) in a public package, or stop exposing the type:%s",
			len(violations), modPath, b.String())
	}
}

// publicPackages lists the module's public packages with
// `go list ./...` from the module root (the test's working directory): every
// package whose import path has no "internal" element, that is not a main
// package and not under cmd/. It returns the module path and the sorted
// import paths.
func publicPackages(t *testing.T) (modPath string, public []string) {
	t.Helper()
	out := runGo(t, "list", "-f", "{{.ImportPath}} {{.Name}} {{with .Module}}{{.Path}}{{end}}", "./...")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		path, name, mod := f[0], f[1], f[2]
		if modPath == "" {
			modPath = mod
		} else if mod != modPath {
			t.Fatalf("go list ./... reported packages of two modules, %s and %s", modPath, mod)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, mod), "/")
		if name == "main" || isInternalPath(path) || rel == "cmd" || strings.HasPrefix(rel, "cmd/") {
			continue
		}
		public = append(public, path)
	}
	if !slices.Contains(public, modPath) {
		t.Fatalf("the module's root package %s is not among its public packages %v", modPath, public)
	}
	slices.Sort(public)
	return modPath, public
}

// exportFiles builds the packages (or finds them in the build cache) with
// `go list -export -deps` and returns the export data file of each package
// and of every dependency, by import path.
func exportFiles(t *testing.T, pkgs []string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, race.GoFlags()...)
	out := runGo(t, append(args, pkgs...)...)
	files := make(map[string]string)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list -json output: %v", err)
		}
		files[p.ImportPath] = p.Export
	}
	return files
}

// runGo runs the go command from PATH and returns its standard output. It
// fails the test, with the command's standard error, if the command fails:
// a build that cannot be listed is a failure, not a reason to skip.
func runGo(t *testing.T, args ...string) []byte {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("finding the go command: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(goCmd, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// isInternalPath reports whether an import path has an "internal" element,
// which restricts who may import it.
func isInternalPath(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// apiViolation is an internal type reached from a public package's API
// with no public name.
type apiViolation struct {
	Pkg   string // import path of the public package whose API reaches it
	Ident string // where: "sstable.Writer.Add param 1"
	Type  string // the internal type, package-qualified by import path
}

func (v apiViolation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Pkg, v.Ident, v.Type)
}

// checkPublicAPI walks the exported API of pkgs and returns, sorted, every
// place where it names an internal type that no exported alias in pkgs
// names. isPublic says which import paths are public packages: their
// unexported types reached from the API are walked too, since outside code
// can use their exported fields and methods.
func checkPublicAPI(pkgs []*types.Package, isPublic func(path string) bool) []apiViolation {
	pkgs = slices.Clone(pkgs)
	slices.SortFunc(pkgs, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	w := &apiWalker{
		isPublic:   isPublic,
		expanded:   make(map[*types.TypeName]bool),
		violations: make(map[apiViolation]bool),
	}
	// Collect the aliases first: an alias in one package makes a type
	// nameable wherever it is used.
	for _, pkg := range pkgs {
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
				w.aliases = append(w.aliases, tn)
			}
		}
	}
	for _, pkg := range pkgs {
		w.pkg = pkg
		scope := pkg.Scope()
		for _, name := range scope.Names() { // sorted: the walk is deterministic
			if obj := scope.Lookup(name); obj.Exported() {
				w.walkObject(obj, pkg.Name()+"."+name)
			}
		}
	}
	out := make([]apiViolation, 0, len(w.violations))
	for v := range w.violations {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b apiViolation) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// apiWalker walks the types an API names. It checks every named type it
// reaches, but walks the insides (underlying type and methods) only of the
// named types whose insides are this API's to answer for: the exported
// types of the package being walked (at their declaration), the unexported
// types of public packages (when reached, since their exported members are
// usable through a value), and the internal types a public package aliases
// (their members are the alias's members). The insides of a named type
// from any other package belong to that package's own API.
type apiWalker struct {
	isPublic   func(path string) bool
	aliases    []*types.TypeName // exported aliases declared in public packages
	expanded   map[*types.TypeName]bool
	pkg        *types.Package // the public package being walked
	violations map[apiViolation]bool
}

// walkObject walks one exported package-level object; path names it.
func (w *apiWalker) walkObject(obj types.Object, path string) {
	switch obj := obj.(type) {
	case *types.Func:
		w.walkSignature(obj.Type().(*types.Signature), path)
	case *types.Var, *types.Const:
		w.walkType(obj.Type(), path)
	case *types.TypeName:
		if !obj.IsAlias() {
			if n, ok := obj.Type().(*types.Named); ok {
				w.expand(n, path)
			}
			return
		}
		if a, ok := obj.Type().(*types.Alias); ok {
			w.walkTypeParams(a.TypeParams(), path)
		}
		target := types.Unalias(obj.Type())
		n, ok := target.(*types.Named)
		if !ok {
			w.walkType(target, path)
			return
		}
		w.checkNamed(n, path)
		w.walkTypeArgs(n, path)
		if pkg := n.Obj().Pkg(); pkg != nil && isInternalPath(pkg.Path()) {
			// The alias is the public face of an internal type: its fields
			// and methods are part of this package's API.
			w.expand(n, path)
		} else {
			w.maybeExpand(n, path)
		}
	}
}

// walkType walks the types t names, recursively through composite types.
func (w *apiWalker) walkType(t types.Type, path string) {
	switch t := t.(type) {
	case *types.Alias:
		if obj := t.Obj(); obj.Exported() && obj.Pkg() != nil && !isInternalPath(obj.Pkg().Path()) {
			// Spelled through an exported alias of a non-internal package
			// (another module's, say): outside code can write that alias,
			// so the named type it stands for needs no alias of ours.
			rhs := types.Unalias(t)
			if n, ok := rhs.(*types.Named); ok {
				w.walkTypeArgs(n, path)
				w.maybeExpand(n, path)
				return
			}
			w.walkType(rhs, path)
			return
		}
		w.walkType(types.Unalias(t), path)
	case *types.Named:
		w.checkNamed(t, path)
		w.walkTypeArgs(t, path)
		w.maybeExpand(t, path)
	case *types.Pointer:
		w.walkType(t.Elem(), path)
	case *types.Slice:
		w.walkType(t.Elem(), path)
	case *types.Array:
		w.walkType(t.Elem(), path)
	case *types.Map:
		w.walkType(t.Key(), path+" key")
		w.walkType(t.Elem(), path)
	case *types.Chan:
		w.walkType(t.Elem(), path)
	case *types.Signature:
		w.walkSignature(t, path)
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				// An unexported embedded field still promotes its exported
				// fields and methods.
				w.walkType(f.Type(), path+"."+f.Name())
			}
		}
	case *types.Interface:
		for m := range t.Methods() { // explicit and embedded
			if m.Exported() {
				w.walkSignature(m.Type().(*types.Signature), path+"."+m.Name())
			}
		}
		for e := range t.EmbeddedTypes() { // constraint type sets
			w.walkType(e, path)
		}
	case *types.Union:
		for term := range t.Terms() {
			w.walkType(term.Type(), path)
		}
	case *types.Tuple:
		for v := range t.Variables() {
			w.walkType(v.Type(), path)
		}
	case *types.Basic, *types.TypeParam:
		// Nothing named; a type parameter's constraint is walked where
		// the parameter is declared.
	default:
		panic(fmt.Sprintf("%s: unexpected type %T (%v)", path, t, t))
	}
}

// walkSignature walks a function's type parameters' constraints,
// parameters and results, numbered from 1.
func (w *apiWalker) walkSignature(sig *types.Signature, path string) {
	w.walkTypeParams(sig.TypeParams(), path)
	for i := range sig.Params().Len() {
		w.walkType(sig.Params().At(i).Type(), fmt.Sprintf("%s param %d", path, i+1))
	}
	for i := range sig.Results().Len() {
		w.walkType(sig.Results().At(i).Type(), fmt.Sprintf("%s result %d", path, i+1))
	}
}

func (w *apiWalker) walkTypeParams(tparams *types.TypeParamList, path string) {
	for tp := range tparams.TypeParams() {
		w.walkType(tp.Constraint(), path+" type param "+tp.Obj().Name())
	}
}

// walkTypeArgs walks the type arguments of an instantiated generic type.
func (w *apiWalker) walkTypeArgs(n *types.Named, path string) {
	for i := range n.TypeArgs().Len() {
		w.walkType(n.TypeArgs().At(i), fmt.Sprintf("%s type arg %d", path, i+1))
	}
}

// maybeExpand walks the insides of n if it is an unexported type of a
// public package: its exported fields and methods are usable by outside
// code holding a value of it. Exported types of public packages are walked
// at their declaration.
func (w *apiWalker) maybeExpand(n *types.Named, path string) {
	obj := n.Origin().Obj()
	if obj.Pkg() != nil && w.isPublic(obj.Pkg().Path()) && !obj.Exported() {
		w.expand(n, path)
	}
}

// expand walks, once, the generic (origin) form of n: its type parameters'
// constraints, its underlying type and its exported methods, those of the
// pointer type and promoted ones included.
func (w *apiWalker) expand(n *types.Named, path string) {
	n = n.Origin()
	if w.expanded[n.Obj()] {
		return
	}
	w.expanded[n.Obj()] = true
	w.walkTypeParams(n.TypeParams(), path)
	w.walkType(n.Underlying(), path)
	if types.IsInterface(n) {
		return // its methods are its underlying interface's, walked above
	}
	mset := types.NewMethodSet(types.NewPointer(n))
	for sel := range mset.Methods() {
		if m := sel.Obj(); m.Exported() {
			w.walkSignature(sel.Type().(*types.Signature), path+"."+m.Name())
		}
	}
}

// checkNamed records a violation if n belongs to an internal package and
// no exported alias of a public package names it.
func (w *apiWalker) checkNamed(n *types.Named, path string) {
	pkg := n.Obj().Pkg()
	if pkg == nil || !isInternalPath(pkg.Path()) || w.nameable(n) {
		return
	}
	w.violations[apiViolation{Pkg: w.pkg.Path(), Ident: path, Type: types.TypeString(n, nil)}] = true
}

// nameable reports whether an exported alias of a public package names n:
// its target is n itself, or, for a generic alias
// `type A[T any] = internalpkg.G[T]`, the same generic type instantiated
// with the alias's own type parameters in order, so that A[X] names G[X].
func (w *apiWalker) nameable(n *types.Named) bool {
	for _, a := range w.aliases {
		target := types.Unalias(a.Type())
		if types.Identical(target, n) {
			return true
		}
		alias, ok := a.Type().(*types.Alias)
		if !ok || alias.TypeParams().Len() == 0 {
			continue
		}
		tn, ok := target.(*types.Named)
		if !ok || tn.Origin() != n.Origin() || tn.TypeArgs().Len() != alias.TypeParams().Len() {
			continue
		}
		same := true
		for i := range tn.TypeArgs().Len() {
			same = same && tn.TypeArgs().At(i) == types.Type(alias.TypeParams().At(i))
		}
		if same {
			return true
		}
	}
	return false
}

// testAPIWalkerFindsHiddenTypes runs checkPublicAPI on synthetic packages:
// example.com/x is the public package under test; it may import
// example.com/x/internal/hidden (go/types, unlike the go command, does not
// enforce the internal rule, which lets the test build any shape) and
// example.com/y, another module's public package that aliases its own
// internal type.
func testAPIWalkerFindsHiddenTypes(t *testing.T) {
	const hiddenPkg = "example.com/x/internal/hidden"
	deps := map[string]string{
		hiddenPkg: `package hidden
			type Key struct{ User []byte }
			func (k Key) Kind() Kind { return 0 }
			func (k *Key) Seq() Seq { return 0 }
			type Kind uint8
			type Seq uint64
			type List[T any] struct{ Items []T }`,
		"example.com/y/internal/z": `package z
			type T struct{}`,
		"example.com/y": `package y
			import "example.com/y/internal/z"
			type T = z.T`,
	}
	hidden := func(name string) string { return hiddenPkg + "." + name }
	tests := []struct {
		name string
		src  string   // the body of package x, which imports hidden and y
		want []string // "ident: type", sorted as checkPublicAPI sorts
	}{
		{
			name: "param",
			src:  `func Use(k hidden.Key) {}`,
			want: []string{"x.Use param 1: " + hidden("Key")},
		},
		{
			name: "param with alias",
			src: `type Key = hidden.Key
				type Kind = hidden.Kind
				type Seq = hidden.Seq
				func Use(k hidden.Key) {}`,
		},
		{
			name: "unexported use",
			src: `type T struct{ k hidden.Key }
				func use(k hidden.Key) {}
				func (T) use(k hidden.Key) {}
				var v hidden.Key`,
		},
		{
			name: "alias exposes members",
			src:  `type Key = hidden.Key`,
			want: []string{"x.Key.Kind result 1: " + hidden("Kind"), "x.Key.Seq result 1: " + hidden("Seq")},
		},
		{
			name: "composites",
			src: `type T struct {
					Keys  []*hidden.Key
					ByKind map[hidden.Kind]int
					Next   func() (int, hidden.Seq)
				}
				var C chan [2]hidden.Key`,
			want: []string{
				"x.C: " + hidden("Key"),
				"x.T.ByKind key: " + hidden("Kind"),
				"x.T.Keys: " + hidden("Key"),
				"x.T.Next result 2: " + hidden("Seq"),
			},
		},
		{
			name: "methods",
			src: `type I interface{ Get() hidden.Key }
				type T struct{}
				func (T) A(hidden.Kind) {}
				func (*T) B() hidden.Seq { return 0 }`,
			want: []string{
				"x.I.Get result 1: " + hidden("Key"),
				"x.T.A param 1: " + hidden("Kind"),
				"x.T.B result 1: " + hidden("Seq"),
			},
		},
		{
			name: "unexported type reached",
			src: `type impl struct{ Exposed hidden.Seq }
				func (impl) Get() hidden.Kind { return 0 }
				type T struct{ impl }
				func New() *impl { return nil }`,
			want: []string{
				"x.New result 1.Exposed: " + hidden("Seq"),
				"x.New result 1.Get result 1: " + hidden("Kind"),
				"x.T.Get result 1: " + hidden("Kind"), // promoted from impl
			},
		},
		{
			name: "generics",
			src: `type Box[T any] struct{ V T }
				func Boxed() Box[hidden.Kind] { return Box[hidden.Kind]{} }
				func Listed() hidden.List[int] { return hidden.List[int]{} }
				func F[T interface{ ~int | hidden.Seq }]() {}`,
			want: []string{
				"x.Boxed result 1 type arg 1: " + hidden("Kind"),
				"x.F type param T: " + hidden("Seq"),
				"x.Listed result 1: " + hidden("List[int]"),
			},
		},
		{
			name: "generic alias",
			src: `type List[T any] = hidden.List[T]
				type Kind = hidden.Kind
				func Listed() hidden.List[Kind] { return hidden.List[Kind]{} }`,
		},
		{
			name: "another module's alias",
			src:  `func Use(y.T) {}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package x\nimport (\n\t\"" + hiddenPkg + "\"\n\t\"example.com/y\"\n)\n" +
				"var _ hidden.Key\nvar _ y.T\n" + tt.src
			imp := &sourceImporter{fset: token.NewFileSet(), src: deps, pkgs: make(map[string]*types.Package)}
			x, err := imp.check("example.com/x", src)
			if err != nil {
				t.Fatalf("type-checking package x: %v", err)
			}
			var got []string
			for _, v := range checkPublicAPI([]*types.Package{x}, func(path string) bool { return path == "example.com/x" }) {
				if v.Pkg != "example.com/x" {
					t.Errorf("violation %v reported for package %s, want example.com/x", v, v.Pkg)
				}
				got = append(got, v.Ident+": "+v.Type)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n\tgot  %q\n\twant %q", got, tt.want)
			}
		})
	}
}

// sourceImporter type-checks the synthetic packages from source.
type sourceImporter struct {
	fset *token.FileSet
	src  map[string]string
	pkgs map[string]*types.Package
}

func (imp *sourceImporter) Import(path string) (*types.Package, error) {
	if pkg, ok := imp.pkgs[path]; ok {
		return pkg, nil
	}
	src, ok := imp.src[path]
	if !ok {
		return nil, fmt.Errorf("no synthetic package %q", path)
	}
	return imp.check(path, src)
}

func (imp *sourceImporter) check(path, src string) (*types.Package, error) {
	f, err := parser.ParseFile(imp.fset, path+".go", src, 0)
	if err != nil {
		return nil, err
	}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(path, imp.fset, []*ast.File{f}, nil)
	if err != nil {
		return nil, err
	}
	imp.pkgs[path] = pkg
	return pkg, nil
}
