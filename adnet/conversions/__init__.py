"""Conversions: what an advertiser pays for after the click. A campaign's goals (``models.ConversionGoal``), the
click ids that carry a recorded click to the landing page (``clicks``), the attribution rules (``attribution``,
pure), and the recording and paying of a reported conversion (``recording``). docs/conversions.md is the guide."""
