"""One module per output for agents, each with its writer and its verifier (see `base`); the
list of them is `outputs.registry.OUTPUTS`."""
