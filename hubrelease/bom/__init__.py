"""A CycloneDX 1.6 ML-BOM of a release, built from its manifest (``bom.document``) and checked
against the schema cyclonedx-python-lib ships (``bom.validate``). Nothing is exported here."""
