"""Reads a Python file with the interpreter's own `ast` module and prints,
as JSON on stdout, the top-level functions in the small schema that
`src/numpy/syntax.rs` deserialises (tenslift optimize).

Usage: python pyast.py FILE

Every node carries `line` and `col` (1-based; `col` counts UTF-8 bytes, as
clang does). Constructs outside the schema become `{"e": "other"}` or
`{"s": "other"}` nodes naming the Python class, so the Rust side can refuse
them with a located diagnostic. A syntax error is reported as
`{"ok": false, "error": {...}}`; this script itself never fails on user
input.
"""

import ast
import json
import sys

BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow",
    ast.MatMult: "matmul", ast.BitAnd: "bitand", ast.BitOr: "bitor",
    ast.BitXor: "bitxor", ast.LShift: "lshift", ast.RShift: "rshift",
}
UNARYOPS = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not", ast.Invert: "invert"}
CMPOPS = {
    ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
    ast.NotEq: "ne", ast.Is: "is", ast.IsNot: "isnot", ast.In: "in", ast.NotIn: "notin",
}


def where(node):
    return {"line": node.lineno, "col": node.col_offset + 1}


class Dumper:
    def __init__(self, source):
        self.source = source

    def expr(self, node):
        out = where(node)
        if isinstance(node, ast.Name):
            out.update(e="name", id=node.id)
        elif isinstance(node, ast.Constant):
            out.update(self.constant(node))
        elif isinstance(node, ast.Attribute):
            out.update(e="attr", value=self.expr(node.value), attr=node.attr)
        elif isinstance(node, ast.Call):
            out.update(self.call(node))
        elif isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            out.update(e="binop", op=BINOPS[type(node.op)],
                       left=self.expr(node.left), right=self.expr(node.right))
        elif isinstance(node, ast.UnaryOp) and type(node.op) in UNARYOPS:
            out.update(e="unary", op=UNARYOPS[type(node.op)], operand=self.expr(node.operand))
        elif isinstance(node, ast.Compare):
            out.update(e="compare", left=self.expr(node.left),
                       ops=[CMPOPS.get(type(o), "other") for o in node.ops],
                       comparators=[self.expr(c) for c in node.comparators])
        elif isinstance(node, ast.Subscript):
            out.update(e="subscript", value=self.expr(node.value), index=self.expr(node.slice))
        elif isinstance(node, ast.Slice):
            out.update(e="slice", lower=self.opt(node.lower), upper=self.opt(node.upper),
                       step=self.opt(node.step))
        elif isinstance(node, (ast.Tuple, ast.List)):
            kind = "tuple" if isinstance(node, ast.Tuple) else "list"
            out.update(e=kind, elts=[self.expr(e) for e in node.elts])
        elif isinstance(node, ast.ListComp):
            out.update(e="listcomp", elt=self.expr(node.elt),
                       generators=[self.generator(g) for g in node.generators])
        elif isinstance(node, ast.Starred):
            out.update(e="other", what="starred argument (*x)")
        else:
            out.update(e="other", what=type(node).__name__)
        return out

    def opt(self, node):
        return None if node is None else self.expr(node)

    def constant(self, node):
        value = node.value
        if isinstance(value, bool):
            return {"e": "const", "kind": "bool", "text": str(value)}
        if isinstance(value, int):
            return {"e": "const", "kind": "int", "text": str(value)}
        if isinstance(value, float):
            text = ast.get_source_segment(self.source, node) or repr(value)
            return {"e": "const", "kind": "float", "text": text}
        if isinstance(value, str):
            return {"e": "const", "kind": "str", "text": value}
        if value is None:
            return {"e": "const", "kind": "none", "text": "None"}
        if value is Ellipsis:
            return {"e": "const", "kind": "ellipsis", "text": "..."}
        return {"e": "other", "what": type(value).__name__ + " literal"}

    def call(self, node):
        keywords = []
        for k in node.keywords:
            if k.arg is None:
                return {"e": "other", "what": "keyword unpacking (**kwargs)"}
            keywords.append({"arg": k.arg, "value": self.expr(k.value), **where(k.value)})
        return {"e": "call", "func": self.expr(node.func),
                "args": [self.expr(a) for a in node.args], "keywords": keywords}

    def generator(self, g):
        return {"target": self.expr(g.target), "iter": self.expr(g.iter),
                "ifs": [self.expr(i) for i in g.ifs], "is_async": bool(g.is_async)}

    def stmt(self, node):
        out = where(node)
        if isinstance(node, ast.Assign):
            out.update(s="assign", targets=[self.expr(t) for t in node.targets],
                       value=self.expr(node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            out.update(s="assign", targets=[self.expr(node.target)], value=self.expr(node.value))
        elif isinstance(node, ast.AugAssign) and type(node.op) in BINOPS:
            out.update(s="augassign", target=self.expr(node.target),
                       op=BINOPS[type(node.op)], value=self.expr(node.value))
        elif isinstance(node, ast.Return):
            out.update(s="return", value=self.opt(node.value))
        elif isinstance(node, ast.Expr):
            out.update(s="expr", value=self.expr(node.value))
        elif isinstance(node, ast.Pass):
            out.update(s="pass")
        else:
            out.update(s="other", what=type(node).__name__)
        return out

    def function(self, node):
        args = node.args
        params = [dict(name=a.arg, **where(a)) for a in args.posonlyargs + args.args]
        extra = []
        if args.vararg or args.kwarg or args.kwonlyargs:
            extra.append("variadic or keyword-only parameters")
        if args.defaults:
            extra.append("default parameter values")
        if node.decorator_list:
            extra.append("decorators")
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        return dict(name=node.name, first_line=first, end_line=node.end_lineno,
                    params=params, unsupported=extra,
                    body=[self.stmt(s) for s in node.body], **where(node))


def main(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        source = raw.decode("utf-8")
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        line = e.lineno or 1
        col = e.offset or 1
        if e.text is not None and e.offset:
            # `offset` counts characters; diagnostics count UTF-8 bytes.
            col = len(e.text[: e.offset - 1].encode("utf-8")) + 1
        print(json.dumps({"ok": False, "error": {"line": line, "col": col, "message": e.msg}}))
        return
    except (UnicodeDecodeError, ValueError) as e:
        print(json.dumps({"ok": False, "error": {"line": 1, "col": 1, "message": str(e)}}))
        return
    dumper = Dumper(source)
    functions = []
    others = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.append(dumper.function(node))
        elif not isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr)):
            others.append(dict(what=type(node).__name__, **where(node)))
    imports = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name] = alias.name
    print(json.dumps({"ok": True, "functions": functions, "imports": imports, "others": others}))


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    try:
        main(sys.argv[1])
    except RecursionError:
        print(json.dumps({"ok": False, "error": {"line": 1, "col": 1,
                                                  "message": "expression nested too deeply"}}))
