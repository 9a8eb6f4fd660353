"""The app's screens: the drill screen and the modal ones it opens."""
