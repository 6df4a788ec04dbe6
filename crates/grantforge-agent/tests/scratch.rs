//! The tests' temporary directories are removed when the test ends, failed ones included.

mod common;

#[test]
fn a_failing_tests_directories_are_removed() {
    let (sender, receiver) = std::sync::mpsc::channel();
    let failed = std::thread::spawn(move || {
        let dir = common::temp_dir("scratch");
        std::fs::write(dir.join("file"), b"x").unwrap();
        sender.send(dir).unwrap();
        panic!("the test fails");
    })
    .join();
    assert!(failed.is_err());
    let dir = receiver.recv().unwrap();
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
