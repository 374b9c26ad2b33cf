"""Texts for testing language handling: the same articles for every store's ``auto`` analysis.

``FRENCH_ARTICLES``: six short French articles; the first quotes a Russian name in Cyrillic, which makes
py3langid call it Russian (0.998). ``FRENCH_QUERIES``: a question per article, in French.
"""

from __future__ import annotations

FRENCH_ARTICLES: tuple[tuple[str, str], ...] = (
    ("hockey", "Vladislav Tretiak — en russe Владисла́в Алекса́ндрович Третья́к — est un gardien de but de hockey sur glace "
               "soviétique, considéré comme l'un des meilleurs gardiens de l'histoire."),
    ("fleuve", "La Loire est le plus long fleuve de France ; elle prend sa source au mont Gerbier-de-Jonc."),
    ("fromage", "Le camembert est un fromage à pâte molle fabriqué en Normandie à partir de lait de vache."),
    ("volcan", "Le puy de Dôme est un volcan endormi de la chaîne des Puys, dans le Massif central."),
    ("peintre", "Claude Monet est un peintre français, l'un des fondateurs de l'impressionnisme."),
    ("cathedrale", "La cathédrale de Chartres est un chef-d'œuvre de l'architecture gothique, célèbre pour ses vitraux."),
)
FRENCH_QUERIES: tuple[str, ...] = ("gardiens de but soviétiques", "le plus long fleuve", "fromages normands", "les volcans endormis",
                                   "peintres impressionnistes", "les vitraux gothiques")
