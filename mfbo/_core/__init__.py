"""What every room of mfbo shares: checks of integer arguments and the seed of a study."""
