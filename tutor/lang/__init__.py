"""The words around the course in the learner's language: gettext's catalogue (`i18n`, `po`),
how wide text is on a terminal (`cells`), and the words of an error map (`mapwords`).

The lowest layer of the tutor: it imports nothing else of it. Translated course files (lessons,
hints, titles, stories) are course content and live in `tutor.course`; the checks that keep
them fresh are `tutor dev check`'s (`tutor.dev.translations`).
"""
