"""What every part uses: the clock, random ids, the public errors, warnings once."""
