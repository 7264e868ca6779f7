"""The episode viewer: one self-contained HTML page that replays a cell step by step (`hivebench view`,
and the sample of episodes a study's report links). `episode` reads a cell's files, each suite's
`Suite.viewer` draws its contact structure as a `scene.Scene`, `page` writes the page."""


class EpisodeError(ValueError):
    """A path that is not a cell's finished file (a one-line message naming the file)."""
