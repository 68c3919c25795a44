"""HTML reports: the figure and table API (:mod:`.html`, :mod:`.figures`), the
sections pages share (:mod:`.sections`), a case page (:mod:`.case_page`), the findings list
(:mod:`.findings_list`) and the index (:mod:`.index`)."""
