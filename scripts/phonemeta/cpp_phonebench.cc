// Google's C++ libphonenumber on the corpus that phonecheck.py draws (see BENCHMARKS.md), the same two
// commands as the gateway's `phone-benchmark`:
//
//   phonebench-cpp results CORPUS OUT      one result line per corpus line, in phone-benchmark's format
//   phonebench-cpp bench CORPUS [SECONDS]  time parse + IsValidNumber + GetNumberType, single thread
//
// A corpus line is `REGION<TAB>INPUT` (REGION empty for none), with `\t`, `\n` and `\\` escaped.
// Built by scripts/phonemeta/run.sh cpp against Debian's libphonenumber-dev.
#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

namespace {

struct Entry {
    std::string region;  // "ZZ" for none: libphonenumber's unknown region
    std::string input;
};

std::string unescape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
            char next = text[++i];
            out.push_back(next == 't' ? '\t' : next == 'n' ? '\n' : next);
        } else {
            out.push_back(text[i]);
        }
    }
    return out;
}

std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\\') out += "\\\\";
        else if (c == '\t') out += "\\t";
        else if (c == '\n') out += "\\n";
        else out.push_back(c);
    }
    return out;
}

std::vector<Entry> read_corpus(const char* path) {
    std::ifstream in(path);
    if (!in) {
        std::cerr << "cannot read " << path << "\n";
        std::exit(2);
    }
    std::vector<Entry> entries;
    std::string line;
    while (std::getline(in, line)) {
        size_t tab = line.find('\t');
        if (tab == std::string::npos) continue;
        std::string region = line.substr(0, tab);
        entries.push_back({region.empty() ? "ZZ" : region, unescape(line.substr(tab + 1))});
    }
    return entries;
}

const char* type_name(PhoneNumberUtil::PhoneNumberType type) {
    switch (type) {
        case PhoneNumberUtil::FIXED_LINE: return "FIXED_LINE";
        case PhoneNumberUtil::MOBILE: return "MOBILE";
        case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: return "FIXED_LINE_OR_MOBILE";
        case PhoneNumberUtil::TOLL_FREE: return "TOLL_FREE";
        case PhoneNumberUtil::PREMIUM_RATE: return "PREMIUM_RATE";
        case PhoneNumberUtil::SHARED_COST: return "SHARED_COST";
        case PhoneNumberUtil::VOIP: return "VOIP";
        case PhoneNumberUtil::PERSONAL_NUMBER: return "PERSONAL_NUMBER";
        case PhoneNumberUtil::PAGER: return "PAGER";
        case PhoneNumberUtil::UAN: return "UAN";
        case PhoneNumberUtil::VOICEMAIL: return "VOICEMAIL";
        default: return "UNKNOWN";
    }
}

const char* error_name(PhoneNumberUtil::ErrorType error) {
    switch (error) {
        case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return "INVALID_COUNTRY_CODE";
        case PhoneNumberUtil::NOT_A_NUMBER: return "NOT_A_NUMBER";
        case PhoneNumberUtil::TOO_SHORT_AFTER_IDD: return "TOO_SHORT_AFTER_IDD";
        case PhoneNumberUtil::TOO_SHORT_NSN: return "TOO_SHORT_NSN";
        case PhoneNumberUtil::TOO_LONG_NSN: return "TOO_LONG";
        default: return "OTHER";
    }
}

// The same fields, in the same order, as phone-benchmark's `describe`.
std::string describe(const PhoneNumberUtil& util, const Entry& entry) {
    PhoneNumber number;
    PhoneNumberUtil::ErrorType error = util.Parse(entry.input, entry.region, &number);
    if (error != PhoneNumberUtil::NO_PARSING_ERROR) return std::string("error\t") + error_name(error);
    std::string region, e164, international, national;
    util.GetRegionCodeForNumber(number, &region);
    if (region == "ZZ" || region.empty()) region = "-";
    util.Format(number, PhoneNumberUtil::E164, &e164);
    util.Format(number, PhoneNumberUtil::INTERNATIONAL, &international);
    util.Format(number, PhoneNumberUtil::NATIONAL, &national);
    std::vector<std::string> fields = {
        "ok", util.IsValidNumber(number) ? "1" : "0", e164, region, type_name(util.GetNumberType(number)),
        util.IsPossibleNumber(number) ? "1" : "0", number.has_extension() ? number.extension() : "",
        international, national,
    };
    std::string out;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out.push_back('\t');
        out += escape(fields[i]);
    }
    return out;
}

int usage() {
    std::cerr << "usage: phonebench-cpp results CORPUS OUT | bench CORPUS [SECONDS]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    std::string command = argv[1];
    using Clock = std::chrono::steady_clock;
    auto load_start = Clock::now();
    const PhoneNumberUtil& util = *PhoneNumberUtil::GetInstance();
    {
        PhoneNumber warm;
        util.Parse("+16505553434", "ZZ", &warm);
    }
    double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
    std::vector<Entry> corpus = read_corpus(argv[2]);

    if (command == "results") {
        if (argc != 4) return usage();
        std::ofstream out(argv[3]);
        for (const Entry& entry : corpus) out << describe(util, entry) << "\n";
        std::cout << "wrote " << corpus.size() << " results\n";
        return 0;
    }
    if (command != "bench") return usage();
    double seconds = argc > 3 ? std::atof(argv[3]) : 5.0;

    // Two timings, like phonecheck.py's Python side: as an application calls it (parse, IsValidNumber,
    // GetNumberType), and pared down to parse + GetNumberType (valid is type != UNKNOWN).
    for (int full = 1; full >= 0; --full) {
        long checksum = 0, parsed = 0, rounds = 0;
        PhoneNumber number;
        auto start = Clock::now();
        auto deadline = start + std::chrono::duration<double>(seconds);
        do {
            for (const Entry& entry : corpus) {
                number.Clear();
                if (util.Parse(entry.input, entry.region, &number) != PhoneNumberUtil::NO_PARSING_ERROR) continue;
                bool valid = full ? util.IsValidNumber(number) : false;
                PhoneNumberUtil::PhoneNumberType type = util.GetNumberType(number);
                if (!full) valid = type != PhoneNumberUtil::UNKNOWN;
                checksum += (valid ? 1 : 0) + static_cast<int>(type);
                ++parsed;
            }
            ++rounds;
        } while (Clock::now() < deadline);
        double total = std::chrono::duration<double>(Clock::now() - start).count();
        double rate = static_cast<double>(rounds * corpus.size()) / total;
        const char* label = full ? "full" : "parse_type";
        std::printf("%s_inputs\t%ld\trounds\t%ld\tparsed\t%ld\tchecksum\t%ld\n", label,
                    static_cast<long>(rounds * corpus.size()), rounds, parsed, checksum);
        std::printf("%s_seconds\t%.3f\n", label, total);
        std::printf("%s_per_second\t%.0f\n", label, rate);
        std::printf("%s_us_per_input\t%.3f\n", label, 1e6 / rate);
    }
    std::printf("metadata_load_ms\t%.1f\n", load_ms);
    return 0;
}
