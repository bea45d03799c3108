#include "store/engine/sql_text.h"

#include <algorithm>
#include <cctype>

namespace apollo::store::sql {
namespace {

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of a line comment ("-- ..." up to and with its newline) at s[i].
size_t LineCommentLen(std::string_view s, size_t i) {
  size_t end = s.find('\n', i);
  return end == std::string_view::npos ? s.size() - i : end + 1 - i;
}

// Length of the quoted run ('...' or "...", doubled quotes escaped) at s[i].
size_t QuotedLen(std::string_view s, size_t i) {
  char q = s[i];
  size_t j = i + 1;
  while (j < s.size()) {
    if (s[j] == q) {
      if (j + 1 < s.size() && s[j + 1] == q) {
        j += 2;
        continue;
      }
      return j + 1 - i;
    }
    ++j;
  }
  return s.size() - i;
}

bool EqualsWord(std::string_view a, std::string_view word) {
  if (a.size() != word.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != word[i]) return false;
  }
  return true;
}

// Cuts the clause word before @rows off the end of `text`; returns it.
std::string CutLead(std::string& text) {
  size_t end = text.find_last_not_of(" \t\n");
  if (end == std::string::npos) return {};
  if (text[end] == ',') {
    text.resize(end);
    return ",";
  }
  size_t start = end + 1;
  while (start > 0 && IsIdent(text[start - 1])) --start;
  std::string_view word(text.data() + start, end + 1 - start);
  for (std::string_view lead : {"FROM", "USING"}) {
    if (EqualsWord(word, lead)) {
      text.resize(start);
      return std::string(lead);
    }
  }
  return {};
}

}  // namespace

std::string KeepDialect(std::string_view text, std::string_view dialect) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\'' || c == '"' || text.compare(i, 2, "--") == 0) {
      size_t n = c == '-' ? LineCommentLen(text, i) : QuotedLen(text, i);
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (text.compare(i, 3, "/*@") != 0) {
      out += c;
      ++i;
      continue;
    }
    size_t name_end = i + 3;
    while (name_end < text.size() && IsIdent(text[name_end])) ++name_end;
    std::string_view name = text.substr(i + 3, name_end - i - 3);
    size_t close = text.find("*/", name_end);
    if (close == std::string_view::npos) close = text.size();
    if (name == dialect) {
      out += ' ';
      out.append(text.substr(name_end, close - name_end));
      out += ' ';
    }
    i = close + 2;
  }
  return out;
}

Result<Template> ParseTemplate(std::string_view text, std::span<const Column> columns) {
  Template t;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) t.pieces.push_back({Template::Piece::Kind::kText, std::move(cur), 0});
    cur.clear();
  };
  auto fail = [&](std::string why) {
    return Status::Internal("statement `" + std::string(text.substr(0, 60)) + "...`: " + why);
  };
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool word_start = i == 0 || !IsIdent(text[i - 1]);
    if (c == '\'' || c == '"' || text.compare(i, 2, "--") == 0) {
      size_t n = c == '-' ? LineCommentLen(text, i) : QuotedLen(text, i);
      cur.append(text.substr(i, n));
      i += n;
    } else if (c == '$' && i + 1 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      size_t j = i + 1;
      int n = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        n = n * 10 + (text[j] - '0');
        ++j;
      }
      flush();
      t.pieces.push_back({Template::Piece::Kind::kParam, {}, n});
      t.params = std::max(t.params, n);
      i = j;
    } else if (c == '@' && text.compare(i, 5, "@rows") == 0 &&
               (i + 5 == text.size() || !IsIdent(text[i + 5]))) {
      if (columns.empty()) return fail("@rows without columns");
      if (t.has_rows) return fail("@rows twice");
      std::string lead = CutLead(cur);
      if (lead.empty()) return fail("@rows must follow FROM, USING or a comma");
      flush();
      t.pieces.push_back({Template::Piece::Kind::kRows, std::move(lead), 0});
      t.has_rows = true;
      i += 5;
    } else if (c == 'u' && word_start && i + 2 < text.size() && text[i + 1] == '.' &&
               IsIdent(text[i + 2])) {
      size_t j = i + 2;
      while (j < text.size() && IsIdent(text[j])) ++j;
      std::string_view name = text.substr(i + 2, j - i - 2);
      int index = -1;
      for (size_t k = 0; k < columns.size(); ++k) {
        if (name == columns[k].name) index = static_cast<int>(k);
      }
      if (index < 0) return fail("u." + std::string(name) + " is not a column of @rows");
      flush();
      t.pieces.push_back({Template::Piece::Kind::kRowRef, std::string(name), index});
      i = j;
    } else {
      cur += c;
      ++i;
    }
  }
  flush();
  bool refs = false;
  for (const auto& p : t.pieces) refs = refs || p.kind == Template::Piece::Kind::kRowRef;
  if (refs && !t.has_rows) return fail("u.<column> without @rows");
  return t;
}

std::string Render(const Template& t, const Spelling& spelling) {
  std::string out;
  for (const Template::Piece& p : t.pieces) {
    switch (p.kind) {
      case Template::Piece::Kind::kText:
        out += p.text;
        break;
      case Template::Piece::Kind::kParam:
        out += spelling.param(p.index);
        break;
      case Template::Piece::Kind::kRowRef:
        out += spelling.row_ref(p);
        break;
      case Template::Piece::Kind::kRows:
        out += spelling.rows(p);
        break;
    }
  }
  return out;
}

}  // namespace apollo::store::sql
