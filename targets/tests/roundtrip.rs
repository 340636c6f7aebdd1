//! Every fixture program survives print → parse unchanged.

mod common;

use tenslift_targets::{parse_program, print_program};

#[test]
fn every_fixture_round_trips_through_the_text_syntax() {
    let fixtures = common::load_fixtures();
    assert!(fixtures.len() >= 60, "only {} fixtures", fixtures.len());
    for f in &fixtures {
        let printed = print_program(&f.program);
        let reparsed = match parse_program("printed.tensir", &printed) {
            Ok(p) => p,
            Err(d) => panic!("{}: printed text does not parse:\n{d}\n{printed}", f.name),
        };
        assert_eq!(
            reparsed, f.program,
            "{}: program changed:\n{printed}",
            f.name
        );
        assert_eq!(
            print_program(&reparsed),
            printed,
            "{}: printing is not stable",
            f.name
        );
    }
}
