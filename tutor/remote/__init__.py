"""Runs on a GPU reached over ssh: `tutor --on HOST`.

The learner edits here; the runs start on the host. `client.RemoteHost` answers the questions a
runner asks of where its runs start (tutor.run.host), through one ssh session (`ssh`): the
bootstrap travels in the ssh command itself (`ship`), sets the host up on first contact
(`hostenv`: an environment in the host's cache with torch built for its driver), takes the
course's files and the tutor package by their hashes (`bundle` here, `store` there), and becomes
the `agent`, which starts each run under the host's own supervisor and warm process and sends
its output, sealed events and end back (`protocol`). `target` remembers which host a course
uses; `messages` says it all in the learner's words.

This file imports nothing: the host imports the package before it has anything but the standard
library.
"""
