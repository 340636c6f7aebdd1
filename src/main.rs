/// Stack of the thread the command line runs on. The frontend bounds
/// expression depth (TL004), but inlined helpers compose: the loop IR of an
/// accepted kernel can be a few thousand levels deep, and the spec, search,
/// emitters and verifier walk it recursively. Only touched pages are used.
const MAIN_STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() {
    let code = std::thread::Builder::new()
        .name("tenslift".into())
        .stack_size(MAIN_STACK_BYTES)
        .spawn(tenslift::cli::main)
        .map(|worker| worker.join().unwrap_or(101))
        .unwrap_or_else(|_| tenslift::cli::main());
    std::process::exit(code);
}
