/// The records of a large environment are hundreds of thousands of small strings and map
/// nodes: mimalloc allocates and frees them markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    memorix::cli::run()
}
