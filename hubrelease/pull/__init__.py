"""``hubrelease pull``: a published release, the files one engine loads, checked and paired with a target."""
