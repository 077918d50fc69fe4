#pragma once
// An open-addressing hash map for the search's bookkeeping (the engine's cache, a run's seen plans): keys
// and values live in one array of slots, probed linearly, so a lookup touches one or two cache lines and an
// insert allocates nothing except when the table doubles. std::unordered_map allocates a node per entry and
// follows two pointers per lookup; at hundreds of thousands of plans a search spent about a quarter of its
// time there. No erase (the searches never remove a plan); iteration order is not offered, so nothing can
// depend on it.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sp::detail {

template <class K, class V, class Hash> class FlatMap {
public:
    /// The value stored for k, or null.
    V* find(const K& k) { return const_cast<V*>(std::as_const(*this).find(k)); }
    const V* find(const K& k) const {
        if (m_size == 0) return nullptr;
        const uint64_t tag = tagOf(k);
        for (size_t i = home(tag);; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.tag == 0) return nullptr;
            if (s.tag == tag && s.key == k) return &s.value;
        }
    }
    bool contains(const K& k) const { return find(k) != nullptr; }
    /// Inserts (k, v) unless k is present; returns the stored value and whether it was inserted.
    std::pair<V*, bool> emplace(const K& k, V v) {
        if (10 * (m_size + 1) > 7 * m_slots.size()) grow();
        const uint64_t tag = tagOf(k);
        for (size_t i = home(tag);; i = (i + 1) & m_mask) {
            Slot& s = m_slots[i];
            if (s.tag == 0) {
                s.tag = tag, s.key = k, s.value = std::move(v);
                ++m_size;
                return {&s.value, true};
            }
            if (s.tag == tag && s.key == k) return {&s.value, false};
        }
    }
    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    void clear() {
        m_slots.clear();
        m_slots.shrink_to_fit();
        m_size = 0, m_mask = 0;
    }

private:
    struct Slot {
        uint64_t tag = 0; ///< 0: empty; otherwise the key's hash with the lowest bit set
        K key{};
        V value{};
    };
    std::vector<Slot> m_slots;
    size_t m_size = 0, m_mask = 0;

    static uint64_t tagOf(const K& k) {
        // The final mix of MurmurHash3 (fmix64), so that the low bits the table indexes by depend on all of
        // the hash's bits.
        uint64_t h = uint64_t(Hash{}(k));
        h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33;
        return h | 1;
    }
    size_t home(uint64_t tag) const { return size_t(tag >> 1) & m_mask; }
    void grow() {
        std::vector<Slot> old = std::move(m_slots);
        m_slots = std::vector<Slot>(old.empty() ? 16 : 2 * old.size());
        m_mask = m_slots.size() - 1;
        for (Slot& s : old) {
            if (s.tag == 0) continue;
            size_t i = home(s.tag);
            while (m_slots[i].tag != 0) i = (i + 1) & m_mask;
            m_slots[i] = std::move(s);
        }
    }
};

} // namespace sp::detail
