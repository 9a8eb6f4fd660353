"""The one width the app's layout turns on (tutor.tcss's `-narrow` rules follow it)."""

NARROW = 110  # columns under which the screens narrow: 80x24 is the size to read well at
