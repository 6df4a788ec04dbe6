//! `grantforge-explain`: what would the agent decide, and why? See `grantforge_agent::explain`.

use std::io::{IsTerminal, Read, Write};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stdin = String::new();
    if grantforge_agent::explain::reads_stdin(&args) && !std::io::stdin().is_terminal() {
        let _ = std::io::stdin().read_to_string(&mut stdin);
    }
    let (code, output) = grantforge_agent::explain::run(&args, &stdin);
    let written = if code == 0 {
        std::io::stdout().write_all(output.as_bytes())
    } else {
        std::io::stderr().write_all(output.as_bytes())
    };
    if written.is_err() {
        std::process::exit(1);
    }
    std::process::exit(code);
}
