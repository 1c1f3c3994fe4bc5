"""The app's screens: browser, kernel view, help (and the pass stepper and diff screen)."""
