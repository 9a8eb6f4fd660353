"""For course authors, as rustlings' `src/dev/`: `tutor dev check` proves the course
(tutor.dev.check), `tutor dev new` scaffolds a drill (tutor.dev.new), and one-idea mutants are
kept as patches (tutor.dev.patches)."""
