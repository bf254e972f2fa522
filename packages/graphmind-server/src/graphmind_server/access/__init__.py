"""Who may connect: the token, Origin and Host guard, the mutual proof, the viewer link, connection limits."""
