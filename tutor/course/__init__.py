"""The course as data, and the learner's state in it.

The catalogue (`drills.yaml` as typed records), where every file of a drill lives, the
diagnosis ids, hint ladders, lessons, translated titles and stories, and the learner's side:
progress and working copies. Torch-free and Textual-free: the CLI, the app and the runs read it.
"""
