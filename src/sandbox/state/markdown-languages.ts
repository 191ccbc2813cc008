/**
 * The names the server's highlighter (Pygments) gives the languages bots and people most often
 * name on a code block: the server writes a block's `data-code-language` as the name of the lexer
 * its language is an alias of, matched without regard to case (`py2` is `Python 2.x`, `console` is
 * `Bash Session`). A language Pygments does not know is kept as written (`yml`, `inventedlanguage`);
 * so, in the sandbox, is any alias missing here.
 */

/** Each entry: aliases, `=`, the lexer's name; entries are separated by `;`. */
const TABLE = `
text = Text only; console shell-session = Bash Session; bash sh shell zsh ksh = Bash
powershell ps1 pwsh = PowerShell; batch bat dosbatch = Batchfile; c = C; cpp c++ = C++
csharp cs c# = C#; css = CSS; scss = SCSS; sass = Sass; less = LessCss; diff udiff = Diff
go golang = Go; html = HTML; xml = XML; xslt = XSLT; java = Java; kotlin = Kotlin; scala = Scala
groovy = Groovy; javascript js = JavaScript; jsx = JSX; typescript ts = TypeScript; tsx = TSX
json = JSON; json5 = JSON5; jsonld = JSON-LD; yaml = YAML; toml = TOML; ini cfg = INI
properties = Properties; dockerfile docker = Docker; makefile make mf = Makefile; cmake = CMake
nginx = Nginx configuration file; apache apacheconf = ApacheConf; sql = SQL; mysql = MySQL
postgresql postgres = PostgreSQL SQL dialect; psql = PostgreSQL console (psql); plpgsql = PL/pgSQL
sqlite3 = sqlite3con; tsql = Transact-SQL; python py python3 py3 = Python; python2 py2 = Python 2.x
pycon = Python console session; ipython = IPython; ruby rb = Ruby; erb = ERB; rust rs = Rust
php = PHP; perl pl = Perl; lua = Lua; r = S; swift = Swift; objective-c objc = Objective-C
dart = Dart; elixir ex exs = Elixir; erlang = Erlang; haskell hs = Haskell; ocaml = OCaml
clojure clj = Clojure; lisp = Common Lisp; scheme = Scheme; julia = Julia; matlab = Matlab
fortran = Fortran; nasm = NASM; asm = GAS; graphql = GraphQL; protobuf proto = Protocol Buffer
terraform hcl tf = Terraform; nix = Nix; vim = VimL; latex tex = TeX; markdown md = Markdown
rst = reStructuredText; http = HTTP; jinja django = Django/Jinja; handlebars = Handlebars
twig = Twig; vue = Vue; zig = Zig; crystal = Crystal; d = D; vbnet = VB.net; fsharp f# = F#
coffeescript coffee = CoffeeScript; elm = Elm; awk = Awk; sed = Sed; tcl = Tcl; verilog = verilog
vhdl = vhdl; systemverilog = systemverilog; llvm = LLVM; solidity = Solidity; prolog = Prolog
cobol = COBOL; ada = Ada; pascal delphi = Delphi; cypher = Cypher; sparql = SPARQL; turtle = Turtle
output = Text output; dot graphviz = Graphviz; gdscript = GDScript; glsl = GLSL; hlsl = HLSL
cuda cu = CUDA; arduino = Arduino; qml = QML; rego = Rego; kusto kql = Kusto
robotframework = RobotFramework; gherkin cucumber = Gherkin; liquid = liquid; pug jade = Pug
haml = Haml; slim = Slim
`;

const names = new Map<string, string>();
for (const entry of TABLE.split(/[;\n]/)) {
  const [aliases, name] = entry.split(" = ");
  if (name === undefined) continue;
  for (const alias of aliases!.trim().split(" ")) names.set(alias, name.trim());
}

/** A code block's language as the server names it in `data-code-language`. */
export function languageName(lang: string): string {
  return names.get(lang.toLowerCase()) ?? lang;
}
