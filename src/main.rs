fn main() {
    std::process::exit(tenslift::cli::main());
}
