use tenslift_frontend::libclang::*;
fn dump(c: Cursor, depth: usize) {
    let pos = c.position().map(|p| format!("{}:{}", p.line, p.col)).unwrap_or_default();
    let extra = match c.kind() {
        114 | 115 => format!(" binop={}", c.binary_operator()),
        112 => format!(" unop={}", c.unary_operator()),
        _ => String::new(),
    };
    println!("{}{} '{}' ty='{}' canon='{}'({}) {}{}", "  ".repeat(depth), c.kind_name(), c.spelling(), c.ty().spelling(), c.ty().canonical().spelling(), c.ty().kind(), pos, extra);
    for ch in c.children() { dump(ch, depth + 1); }
}
fn main() {
    install_on_this_thread().unwrap();
    let args: Vec<String> = std::env::args().collect();
    let idx = Index::new();
    let tu = idx.parse(&args[1], &args[2..].to_vec()).unwrap();
    for d in tu.diagnostics() { println!("DIAG {:?}", d); }
    for c in tu.root().children() {
        if c.position().map(|p| p.in_main_file).unwrap_or(false) { dump(c, 0); }
    }
}
