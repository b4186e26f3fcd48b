"""mkdocs-toolcatalog: a verified catalog of agent-tool manifests.

The package is a library first: `harvest` finds and parses manifests into the
normalized model, `catalog` turns the model into the JSON index, `render` turns
it into HTML. The MkDocs plugin (`toolcatalog.plugin`) and the `toolcatalog`
command (`toolcatalog.cli`) only orchestrate those pieces.
"""

__version__ = "0.1.0"
