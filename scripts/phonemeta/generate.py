#!/usr/bin/env python3
"""Generates Sources/GatewayCore/PhoneNumbers/GeneratedPhoneMetadata.swift from libphonenumber's data.

The source of truth is libphonenumber's metadata as shipped in the `phonenumbers` package on PyPI
(the Python port of libphonenumber, whose versions track libphonenumber's), and region display names
from CLDR as shipped in the `babel` package on PyPI. Run it through `scripts/phonemeta/regenerate.sh`,
which installs the pinned versions from requirements.txt into a virtual environment first.

The output is one Swift file holding two raw string literals in a compact line format (see
PhoneMetadataStore.swift for the reader). Big string literals compile quickly; big array literals do not.
"""
import os
import sys

import babel
import phonenumbers
from babel import Locale
from phonenumbers.phonemetadata import PhoneMetadata
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, COUNTRY_CODES_FOR_NON_GEO_REGIONS, SUPPORTED_REGIONS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(ROOT, "Sources", "GatewayCore", "PhoneNumbers", "GeneratedPhoneMetadata.swift")

# Order matters: it is the index of PhoneNumberType's metadata slots in the Swift reader.
DESC_FIELDS = [
    "general_desc", "fixed_line", "mobile", "toll_free", "premium_rate", "shared_cost",
    "voip", "personal_number", "pager", "uan", "voicemail",
]
# CLDR locales for region names; the Swift side knows them by these BCP 47 tags.
NAME_LOCALES = [
    ("en", "en"), ("zh-Hans", "zh_Hans"), ("zh-Hant", "zh_Hant"), ("es", "es"), ("fr", "fr"),
    ("de", "de"), ("ja", "ja"), ("pt", "pt"), ("ar", "ar"),
]
FIELD_SEPARATOR = "\t"
LIST_SEPARATOR = ";"  # between leading-digits patterns of one format (never in a pattern)


def field(value):
    """One field: None and the empty string are both written empty (libphonenumber treats them alike)."""
    if value is None:
        return ""
    text = str(value)
    for bad in ("\t", "\n", ";", '"""#'):
        if bad in text:
            raise SystemExit(f"metadata value {text!r} contains {bad!r}, which the format cannot carry")
    return text


def lengths(values):
    return ",".join(str(v) for v in values)


def flag(value):
    return "1" if value else ""


def desc_line(index, desc):
    if desc is None:
        return None
    return FIELD_SEPARATOR.join([
        "T", str(index), field(desc.national_number_pattern), lengths(desc.possible_length),
        lengths(desc.possible_length_local_only), field(desc.example_number),
    ])


def format_line(kind, fmt):
    return FIELD_SEPARATOR.join([
        kind, field(fmt.pattern), field(fmt.format), LIST_SEPARATOR.join(field(p) for p in fmt.leading_digits_pattern),
        field(fmt.national_prefix_formatting_rule), flag(fmt.national_prefix_optional_when_formatting),
        field(fmt.domestic_carrier_code_formatting_rule),
    ])


def metadata_lines(md):
    lines = [FIELD_SEPARATOR.join([
        "R", md.id, str(md.country_code), field(md.international_prefix), field(md.preferred_international_prefix),
        field(md.national_prefix), field(md.national_prefix_for_parsing), field(md.national_prefix_transform_rule),
        field(md.leading_digits), field(md.preferred_extn_prefix), flag(md.main_country_for_code),
        flag(md.mobile_number_portable_region),
    ])]
    for index, name in enumerate(DESC_FIELDS):
        line = desc_line(index, getattr(md, name))
        if line is not None:
            lines.append(line)
    lines.extend(format_line("F", f) for f in md.number_format)
    # libphonenumber's metadata builder already resolved intlFormat ("NA", same as format) into this list.
    lines.extend(format_line("I", f) for f in md.intl_number_format)
    return lines


def main():
    PhoneMetadata.load_all()
    lines = []
    for cc in sorted(COUNTRY_CODE_TO_REGION_CODE):
        lines.append(FIELD_SEPARATOR.join(["C", str(cc), ",".join(COUNTRY_CODE_TO_REGION_CODE[cc])]))
    for region in sorted(SUPPORTED_REGIONS):
        lines.extend(metadata_lines(PhoneMetadata.metadata_for_region(region)))
    for cc in sorted(COUNTRY_CODES_FOR_NON_GEO_REGIONS):
        lines.extend(metadata_lines(PhoneMetadata.metadata_for_nongeo_region(cc)))

    locales = [(tag, Locale.parse(name)) for tag, name in NAME_LOCALES]
    name_lines = [FIELD_SEPARATOR.join(["L"] + [tag for tag, _ in locales])]
    for region in sorted(SUPPORTED_REGIONS) + ["001"]:
        names = []
        for tag, locale in locales:
            name = locale.territories.get(region)
            if name is None:
                raise SystemExit(f"CLDR (babel {babel.__version__}) has no {tag} name for region {region}")
            names.append(field(name))
        name_lines.append(FIELD_SEPARATOR.join([region] + names))

    metadata_text = "\n".join(lines)
    names_text = "\n".join(name_lines)
    swift = f'''// swift-format-ignore-file
// GENERATED FILE: do not edit. Regenerate with `scripts/phonemeta/regenerate.sh`.
//
// Phone number metadata from libphonenumber {phonenumbers.__version__}, as shipped in the `phonenumbers`
// package {phonenumbers.__version__} on PyPI (the Python port, whose versions track libphonenumber's).
// Region names from CLDR, as shipped in the `babel` package {babel.__version__} on PyPI.
//
// libphonenumber metadata:
//   Copyright (C) 2009-2026 The Libphonenumber Authors
//
//   Licensed under the Apache License, Version 2.0 (the "License");
//   you may not use this file except in compliance with the License.
//   You may obtain a copy of the License at
//
//       http://www.apache.org/licenses/LICENSE-2.0
//
//   Unless required by applicable law or agreed to in writing, software
//   distributed under the License is distributed on an "AS IS" BASIS,
//   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
//   See the License for the specific language governing permissions and
//   limitations under the License.
//
// CLDR region names: Copyright (C) 1991-2026 Unicode, Inc., under the Unicode License v3.

/// The metadata as compact text, decoded once on first use by ``PhoneMetadataStore``.
enum GeneratedPhoneMetadata {{
    /// The libphonenumber version the metadata was taken from.
    static let libphonenumberVersion = "{phonenumbers.__version__}"
    /// The CLDR source of the region names.
    static let regionNamesSource = "babel {babel.__version__} (CLDR)"

    /// `C` lines: calling code and its regions, main region first. `R` lines start a region; the `T`, `F`
    /// and `I` lines after it are its number descriptions, national formats and international formats.
    static let metadata = #"""
{metadata_text}
"""#

    /// A header line of locale tags, then one line per region: the code and its name in each locale.
    static let regionNames = #"""
{names_text}
"""#
}}
'''
    with open(OUTPUT, "w", encoding="utf-8") as out:
        out.write(swift)
    print(f"wrote {OUTPUT}: {len(lines)} metadata lines, {len(name_lines) - 1} region names, "
          f"phonenumbers {phonenumbers.__version__}, babel {babel.__version__}")


if __name__ == "__main__":
    sys.exit(main())
