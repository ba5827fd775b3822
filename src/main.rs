fn main() -> std::process::ExitCode {
    memorix::cli::run()
}
