"""Format plugins shipped with auger and written on the scan framework's reader API.

Each is an ordinary plugin: a :class:`auger.scan.ReaderFormatPlugin` registered under the
``auger.formats`` entry-point group by auger's own package metadata, exactly as a third party's
would be (``docs/plugins.md``). They sit above :mod:`auger.scan` because they use it; nothing in
auger imports them except through that entry point.
"""
