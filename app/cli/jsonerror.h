#pragma once
// --json and failure: a program reading stdout gets a JSON object that says what went wrong, not an empty
// stream. While alive, what is written to std::cerr is kept (and still written); what is written to
// std::cout is counted.

#include <iostream>
#include <streambuf>
#include <string>

namespace sp::cli {

class JsonErrorOnFailure {
public:
    JsonErrorOnFailure() : m_err(std::cerr.rdbuf()), m_out(std::cout.rdbuf()) {
        std::cerr.rdbuf(&m_err);
        std::cout.rdbuf(&m_out);
    }
    ~JsonErrorOnFailure() {
        std::cerr.rdbuf(m_err.target);
        std::cout.rdbuf(m_out.target);
    }
    JsonErrorOnFailure(const JsonErrorOnFailure&) = delete;
    JsonErrorOnFailure& operator=(const JsonErrorOnFailure&) = delete;
    /// What went to std::cerr so far (the error messages), without the usage text after a blank line.
    std::string errors() const {
        const auto blank = m_err.kept.find("\n\n");
        std::string e = blank == std::string::npos ? m_err.kept : m_err.kept.substr(0, blank + 1);
        while (!e.empty() && e.back() == '\n') e.pop_back();
        for (size_t at = 0; (at = e.find("shardplan: ", at)) != std::string::npos;) {
            if (at == 0 || e[at - 1] == '\n')
                e.erase(at, 11);
            else
                at += 11;
        }
        return e;
    }
    /// Whether anything was written to std::cout.
    bool wroteOutput() const { return m_out.count > 0; }

private:
    struct Tee : std::streambuf {
        explicit Tee(std::streambuf* t) : target(t) {}
        std::streambuf* target;
        std::string kept;
        int_type overflow(int_type c) override {
            if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
            if (kept.size() < 65536) kept.push_back(traits_type::to_char_type(c));
            return target->sputc(traits_type::to_char_type(c));
        }
        std::streamsize xsputn(const char* s, std::streamsize n) override {
            if (kept.size() < 65536) kept.append(s, size_t(n));
            return target->sputn(s, n);
        }
        int sync() override { return target->pubsync(); }
    };
    struct Counter : std::streambuf {
        explicit Counter(std::streambuf* t) : target(t) {}
        std::streambuf* target;
        long long count = 0;
        int_type overflow(int_type c) override {
            if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
            ++count;
            return target->sputc(traits_type::to_char_type(c));
        }
        std::streamsize xsputn(const char* s, std::streamsize n) override {
            count += n;
            return target->sputn(s, n);
        }
        int sync() override { return target->pubsync(); }
    };
    Tee m_err;
    Counter m_out;
};

} // namespace sp::cli
